namespace Jackdaw.Client;

/// <summary>Marker for the client SDK assembly.</summary>
public static class ClientAssembly
{
    public const string Name = "Jackdaw.Client";
}
