# A stand-in that hides python3-torch: with this folder first on PYTHONPATH,
# `import torch` fails, so tests/testutil.c's torch_available() says no and
# the suite runs as on a machine without torch (the parity tests skip; the
# fixture comparisons of tests/test_reference.c still run).
#     make test-no-torch      (or PYTHONPATH=tests/no-torch ./build/tests/test_x)
raise ImportError("python3-torch hidden by tests/no-torch (PYTHONPATH)")
