"""The researcher console: studies, protocol, pools, people, progress."""
