namespace Jackdaw.Client;

/// <summary>What happened to a document (RavenDB's names and values).</summary>
[Flags]
public enum DocumentChangeTypes
{
    None = 0,
    Put = 1,
    Delete = 2,
    Common = Put | Delete,
}
