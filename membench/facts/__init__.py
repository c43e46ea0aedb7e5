"""Fact records for "value + facts" retrieval: extracted by a model (`extract`), or LoCoMo's own
`observation` facts (`observations`, zero calls). Both write one fact log per session in the same format."""
