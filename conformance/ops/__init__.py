"""The operator table: one entry per operator, grouped by family, and the family engines."""
