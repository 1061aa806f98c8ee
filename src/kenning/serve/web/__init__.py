"""`kenning ui`: a local web app over the vault (FastAPI + Jinja2, server-rendered, one vendored plain-JS file)."""
