// Every test that imports ServerTrustTestSupport also sees ServerTrustLab (LabPKI,
// LocalTLSServer…), as it did before the lab became a target of its own: test files, including
// those on branches written before the split, keep one import.
@_exported public import ServerTrustLab
