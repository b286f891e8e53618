"""What the pages show, built from selectors' rows: plain data for the templates, no requests, no writes."""
