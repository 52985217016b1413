"""Forgetting: requests in words, judged and bounded; deletion under the space lock, retention and erasure — and
nothing forgotten left readable anywhere (memory/forgetting)."""
