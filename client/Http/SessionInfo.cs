namespace Jackdaw.Client.Http;

/// <summary>What the executor knows of the session a request comes from: its number, which picks its node for reads.</summary>
internal sealed class SessionInfo(int sessionId)
{
    public int SessionId { get; } = sessionId;
}
