namespace Jackdaw.Server.Documents;

/// <summary>
/// An attachment of a replicated document version, as its source had it: its name, content type
/// and the content it links (staged or held in memory when the batch carried it, else one this
/// node stores already).
/// </summary>
public sealed record ReplicatedAttachment(string Name, string ContentType, AttachmentSource Source);
