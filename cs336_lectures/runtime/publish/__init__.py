"""Publishing traces as a static site: the viewer's files, `traces/index.json`, the page's
Content-Security-Policy (site)."""
