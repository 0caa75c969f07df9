"""The audit web UI (``scarwarden serve``) and the static export (``scarwarden audit
--html``). Needs the ``ui`` extra (Flask, which brings Jinja): ``pip install
'scarwarden[ui]'``. Nothing here is imported unless one of those commands runs."""
