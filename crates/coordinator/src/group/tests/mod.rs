mod fake;
