namespace Jackdaw.Server.Documents;

/// <summary>What a ForceRevisionCreation did: whether it stored a revision, and the document's id, change vector and time afterwards.</summary>
public readonly record struct ForceRevisionResult(bool RevisionCreated, string Id, string ChangeVector, DateTime LastModified);
