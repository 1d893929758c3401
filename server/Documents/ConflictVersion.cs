namespace Jackdaw.Server.Documents;

/// <summary>One kept version of a conflicted document: its change vector, time, collection and body (null for a deletion).</summary>
public sealed record ConflictVersion(string Id, string ChangeVector, long LastModifiedTicks, string? Collection, byte[]? Document);
