"""fake-pve for Python: run the in-memory Proxmox VE emulator from Python.

::

    from fake_pve import FakePve

    with FakePve() as pve:
        print(pve.url, pve.ca_cert, pve.credentials)

The pytest plugin (``fake_pve.pytest_plugin``) is registered through the
package's ``pytest11`` entry point.
"""

from importlib.metadata import PackageNotFoundError, version as _version

from ._server import ControlError, FakePve, FakePveError, StartError, Token, find_binary

try:
    __version__ = _version("fake-pve")
except PackageNotFoundError:  # run from a checkout without installing
    __version__ = "0+unknown"

__all__ = ["ControlError", "FakePve", "FakePveError", "StartError", "Token", "find_binary", "__version__"]
