namespace Jackdaw.Server.Subscriptions;

/// <summary>What a <see cref="SubscriptionProposal"/> changes.</summary>
public enum SubscriptionProposalKind
{
    Create,
    Delete,
    SetDisabled,
    Acknowledge,
}
