namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>RavenDB's <c>DatabaseSmugglerImportOptions</c>, and the size limit of one document.</summary>
public sealed class SmugglerImportOptions : SmugglerOptions
{
    /// <summary>The default <see cref="MaxDocumentBytes"/>: 64 MiB, the server's default document limit.</summary>
    public const long DefaultMaxDocumentBytes = 64L * 1024 * 1024;

    /// <summary>A document entry longer than this (as JSON text) is refused and reported; the rest is imported.</summary>
    public long MaxDocumentBytes { get; set; } = DefaultMaxDocumentBytes;

    /// <summary>The setting that decides <see cref="MaxDocumentBytes"/>, named when a document is refused for it.</summary>
    public string MaxDocumentSetting { get; set; } = "Limits:MaxDocumentBodySize";
}
