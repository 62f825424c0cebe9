//! The results database: every run recorded in SQLite (rusqlite, bundled). (Filled in by the reproduce/report work.)
