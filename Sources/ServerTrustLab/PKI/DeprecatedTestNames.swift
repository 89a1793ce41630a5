// The lab's types were called Test… until they shipped in `servertrust demo`; these names keep
// code written against them compiling, with a fix-it to the new name.

/// Renamed ``LabPKI``.
@available(*, deprecated, renamed: "LabPKI")
public typealias TestPKI = LabPKI

/// Renamed ``LabCA``.
@available(*, deprecated, renamed: "LabCA")
public typealias TestCA = LabCA

/// Renamed ``LabLeaf``.
@available(*, deprecated, renamed: "LabLeaf")
public typealias TestLeaf = LabLeaf

/// Renamed ``LabKey``.
@available(*, deprecated, renamed: "LabKey")
public typealias TestKey = LabKey

/// Renamed ``LabName``.
@available(*, deprecated, renamed: "LabName")
public typealias TestName = LabName

/// Renamed ``LabPKIError``.
@available(*, deprecated, renamed: "LabPKIError")
public typealias TestPKIError = LabPKIError
