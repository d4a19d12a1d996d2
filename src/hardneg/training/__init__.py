"""Training against hard negatives."""
