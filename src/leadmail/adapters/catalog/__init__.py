"""Template catalogs: the predefined templates, read from ``.html`` files."""
