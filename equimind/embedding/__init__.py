"""The models: the sentence embedders (sentence-transformers, ONNX, hash), the cross-encoder reranker, their ONNX
export and the model hub commands (`equimind models`).
"""
