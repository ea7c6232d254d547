// The observation module: see issue 4.
