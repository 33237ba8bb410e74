"""`co-tui daemon` and the commands around it: `co-tui jobs`, `co-tui inbox`."""
