"""The API's operations, one module per resource."""
