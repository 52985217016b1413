"""Export and import of a space, optionally sealed with a passphrase. The doors (``api/``, ``console/``,
``mcp_server/``) import this module, not the ones inside it."""

from memory.transfer.export import export_lines
from memory.transfer.importing import import_into
from memory.transfer.sealing import TransferError

__all__ = ["TransferError", "export_lines", "import_into"]
