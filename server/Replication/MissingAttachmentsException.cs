namespace Jackdaw.Server.Replication;

/// <summary>
/// A replicated document lists an attachment whose content this node does not store and the
/// batch did not carry (the sender guessed this node had it). The receiver refuses the batch with
/// <c>{"Type":"Error","MissingAttachments":true}</c>; the sender then sends it again with every
/// content its items list.
/// </summary>
public sealed class MissingAttachmentsException(string message) : Exception(message);
