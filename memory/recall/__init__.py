"""Recall: the hybrid search under the relevance gate, the prompt block it renders and an answer synthesized from
its hits. The doors (``api/``, ``console/``, ``mcp_server/``) import this module, not the ones inside it."""

from memory.recall.prompt_block import HEADER as PROMPT_BLOCK_HEADER
from memory.recall.prompt_block import estimate_tokens
from memory.recall.search import recall
from memory.recall.synthesis import synthesize

__all__ = ["PROMPT_BLOCK_HEADER", "estimate_tokens", "recall", "synthesize"]
