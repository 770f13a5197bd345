"""The template catalog shipped with leadmail: one ``.html`` file per template."""
