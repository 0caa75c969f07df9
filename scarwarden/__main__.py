from __future__ import annotations

from scarwarden.cli import main

if __name__ == "__main__":
    main()
