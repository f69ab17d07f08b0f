"""PyTorch's long tail, mixed into the Tensor: rare methods (``methods``), the in-place family and view
writes (``inplace``), PyTorch's indexing rules (``indexing``), argument rules (``args``), rarer ops (``ops``)."""
