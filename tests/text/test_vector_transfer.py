"""Recall reads a candidate's stored vector in halfvec's binary form (``halfvec_send``), not as the column's
text: the relevance gate must see exactly the values the column holds, in any space's rotation."""

from __future__ import annotations

import numpy as np
from django.db import connection

from memory.text.embeddings import sent_vector, stored_vector
from memory.text.vectors import into_space


def test_a_vector_read_in_binary_is_the_vector_the_column_holds(db, space_a):
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((5, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    # The extremes a half float holds, its smallest subnormal and a negative zero, beside unit vectors.
    extremes = np.zeros(384, dtype=np.float32)
    extremes[:4] = [65504.0, -65504.0, 5.96e-8, -0.0]
    for vector in [*into_space(space_a.id, vectors), extremes]:
        literal = "[" + ",".join(repr(float(v)) for v in vector) + "]"
        with connection.cursor() as cursor:
            cursor.execute("SELECT %s::halfvec, halfvec_send(%s::halfvec)", [literal, literal])
            as_text, as_binary = cursor.fetchone()
        from_text = stored_vector(as_text[1:-1].split(","))  # the column's text form, as the ORM parses it
        from_binary = sent_vector(as_binary)
        assert from_binary.dtype == np.float32 and from_binary.shape == (384,)
        assert np.array_equal(from_binary, from_text)
        assert np.allclose(from_binary, vector.astype(np.float16).astype(np.float32))
