namespace Jackdaw.Storage;

/// <summary>Marker for the storage assembly (Engine/ and Blittable/ live beside it).</summary>
public static class StorageAssembly
{
    public const string Name = "Jackdaw.Storage";
}
