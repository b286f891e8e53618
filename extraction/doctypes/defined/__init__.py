"""Document types defined as data: the definition (spec), its checks, YAML files, the DocumentType built from it."""
