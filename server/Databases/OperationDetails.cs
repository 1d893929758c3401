namespace Jackdaw.Server.Databases;

/// <summary>
/// The progress and result of an operation that is not a bulk insert (a backup, a restore), as
/// JSON its owner wrote in RavenDB's shape for its kind (with its <c>$type</c>): this layer only
/// stores and hands them on.
/// </summary>
/// <param name="ProgressJson">While it runs: its progress now; null once it ended.</param>
/// <param name="ResultJson">Once it completed: its result; null before, or when it failed.</param>
public sealed record OperationDetails(byte[]? ProgressJson, byte[]? ResultJson);
