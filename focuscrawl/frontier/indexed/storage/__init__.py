"""The indexed store on disk: the SQLite schema, commits, the run journal, cold texts."""
