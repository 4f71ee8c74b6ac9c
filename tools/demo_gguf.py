"""A minimal GGUF v3 writer for the demo models (little-endian; layout as engine/gguf/gguf_file.h
documents it, after the GGUF specification in ggml's docs/gguf.md):

  u32 magic "GGUF", u32 version 3, u64 tensor_count, u64 kv_count
  kv_count x (string key, u32 value_type, value)           string = u64 length + UTF-8 bytes
  tensor_count x (string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset)
  zero padding to general.alignment (32), then the tensor data, each tensor at an aligned offset

ne is in ggml order (ne[0] = row length), i.e. the reverse of the PyTorch shape.
"""

import struct

import numpy as np

T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY = 4, 5, 6, 7, 8, 9
GGML_F32, GGML_F16 = 0, 1
ALIGNMENT = 32


def _string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _value(vtype, v):
    if vtype == T_UINT32:
        return struct.pack("<I", v)
    if vtype == T_INT32:
        return struct.pack("<i", v)
    if vtype == T_FLOAT32:
        return struct.pack("<f", v)
    if vtype == T_BOOL:
        return struct.pack("<B", 1 if v else 0)
    if vtype == T_STRING:
        return _string(v)
    raise ValueError(f"unsupported value type {vtype}")


class GgufWriter:
    def __init__(self):
        self.kv = []  # (key, bytes of type + value)
        self.tensors = []  # (name, ne, ggml_type, data bytes)

    def add(self, key, vtype, value):
        self.kv.append((key, struct.pack("<I", vtype) + _value(vtype, value)))

    def add_array(self, key, elem_type, values):
        body = struct.pack("<IIQ", T_ARRAY, elem_type, len(values))
        body += b"".join(_value(elem_type, v) for v in values)
        self.kv.append((key, body))

    def add_tensor(self, name, array, f16):
        a = np.ascontiguousarray(array, dtype=np.float16 if f16 else np.float32)
        ne = list(reversed(a.shape))
        self.tensors.append((name, ne, GGML_F16 if f16 else GGML_F32, a.tobytes()))

    def write(self, path):
        head = b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv))
        for key, body in self.kv:
            head += _string(key) + body
        offset = 0
        offsets = []
        for name, ne, gtype, data in self.tensors:
            offsets.append(offset)
            offset += len(data)
            offset = (offset + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
        for (name, ne, gtype, data), off in zip(self.tensors, offsets):
            head += _string(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", n) for n in ne)
            head += struct.pack("<IQ", gtype, off)
        head += b"\0" * ((-len(head)) % ALIGNMENT)
        with open(path, "wb") as f:
            f.write(head)
            pos = 0
            for (name, ne, gtype, data), off in zip(self.tensors, offsets):
                f.write(b"\0" * (off - pos))
                f.write(data)
                pos = off + len(data)
