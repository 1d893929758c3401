namespace Jackdaw.Client;

/// <summary>A worker connected to a subscription: its address, since when, and how it connected.</summary>
public sealed class SubscriptionConnectionInfo
{
    public string Address { get; init; } = "";

    public DateTime Since { get; init; }

    public SubscriptionOpeningStrategy Strategy { get; init; }
}
