namespace Jackdaw.Server.Indexing;

/// <summary>An error mapping one document.</summary>
public sealed record IndexError(string Document, string Action, string Error, DateTime Timestamp);
