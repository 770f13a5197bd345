"""leadmail."""
