"""De-duplication: restatements merge, real updates supersede, and operators' pair marks check the rule
(memory/dedup)."""
