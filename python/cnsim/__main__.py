"""``python -m cnsim`` is the same as the ``cnsim`` command."""

from .cli import main

if __name__ == "__main__":
    main()
