"""BEAM ("Beyond a Million Tokens", arXiv 2510.27246): long chats at 100K and 500K tokens, ten memory abilities."""
