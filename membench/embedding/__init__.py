"""Text embedding: the content-addressed vector cache, the encoder (torch or ONNX), the pinned numeric
profile that makes vectors the same bits whatever the batch, the texts a run embeds, and the cosine."""
