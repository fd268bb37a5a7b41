"""The public API is exactly what ``__all__`` says, and every name in it exists."""

import reviewbench


def test_exported_members():
    exported = set(reviewbench.__all__)
    public = {name for name in vars(reviewbench) if not name.startswith("_")}
    # Subpackages imported as a side effect are not API; everything else public must be listed.
    modules = {name for name in public if type(getattr(reviewbench, name)).__name__ == "module"}
    assert public - modules == exported - {"__version__"}
    for name in exported:
        assert hasattr(reviewbench, name)
