namespace Jackdaw.Server.Changes;

/// <summary>What a queued <see cref="ChangesMessage"/> carries.</summary>
public enum ChangesMessageKind : byte
{
    /// <summary>A durable commit: the sender sends those of its changes the connection watches.</summary>
    Commit,

    /// <summary>An index change: the payload is its <c>Value</c> object.</summary>
    Index,

    /// <summary>An operation's status change: the payload is its <c>Value</c> object.</summary>
    Operation,

    /// <summary>A whole message written as it is (<c>Confirm</c>, <c>Error</c>).</summary>
    Raw,
}

/// <summary>
/// One entry of a connection's queue. Its <see cref="Weight"/> is what it counts against the
/// queue's capacity: a commit weighs its number of changes (the most it can send), anything else 1.
/// </summary>
public readonly record struct ChangesMessage(ChangesMessageKind Kind, PublishedCommit? Commit, byte[]? Payload, int Weight)
{
    public static ChangesMessage ForCommit(PublishedCommit commit) => new(ChangesMessageKind.Commit, commit, null, Math.Max(1, commit.Changes.Count));

    public static ChangesMessage ForIndex(byte[] payload) => new(ChangesMessageKind.Index, null, payload, 1);

    public static ChangesMessage ForOperation(byte[] payload) => new(ChangesMessageKind.Operation, null, payload, 1);

    public static ChangesMessage Raw(byte[] message) => new(ChangesMessageKind.Raw, null, message, 1);
}
