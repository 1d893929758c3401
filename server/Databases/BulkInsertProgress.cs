namespace Jackdaw.Server.Databases;

/// <summary>
/// How far a bulk insert has come, at one moment (RavenDB's <c>BulkInsertProgress</c>).
/// </summary>
/// <param name="Total">Documents committed (durable).</param>
/// <param name="BatchCount">Batches committed.</param>
/// <param name="LastProcessedId">The id of the last document of the last batch committed; null before the first.</param>
/// <param name="DocumentsProcessed">Documents read off the stream, committed or not yet.</param>
/// <remarks>
/// Attachments, counters and time series are not bulk-inserted by Jackdaw (only PUTs are), so
/// their counts, which RavenDB's shape also has, are always 0 and not kept here.
/// </remarks>
public readonly record struct BulkInsertProgress(long Total, long BatchCount, string? LastProcessedId, long DocumentsProcessed);
