"""Latency properties on the explored state graph (python and compiled cores).

May import: `engines.explicit` and what it may import."""
