namespace Jackdaw.Server.Errors;

/// <summary>
/// A change of the cluster's state reached a node that is not the leader and could not be passed
/// on to it (no leader is known, during an election, or the leader did not answer).
/// </summary>
public sealed class NotLeaderException : Exception
{
    public NotLeaderException(string message, string? leaderTag = null, string? leaderUrl = null)
        : base(message)
    {
        LeaderTag = leaderTag;
        LeaderUrl = leaderUrl;
    }

    /// <summary>The leader's tag, when one is known.</summary>
    public string? LeaderTag { get; }

    /// <summary>The leader's URL, when one is known.</summary>
    public string? LeaderUrl { get; }
}
