"""The failure every model-backed step handles alike: the model could not give a usable answer."""


class ModelUnavailable(RuntimeError):
    """The chat model could not answer (down, timed out, malformed reply). Retry later."""
