using System.Text;
using Jackdaw.Server.Documents;
using Jint;
using Jint.Native;
using Jint.Native.Object;
using Jint.Runtime;
using Jint.Runtime.Interop;

namespace Jackdaw.Server.Indexing.JavaScript;

/// <summary>
/// RavenDB's attachment functions of JavaScript maps: <c>attachmentsFor(doc)</c> (the details of
/// each attachment: <c>{Name, Hash, ContentType, Size}</c>), <c>loadAttachment(doc, name)</c> (the
/// details and <c>getContentAsString(encoding?)</c>, or null) and <c>loadAttachments(doc)</c> (one
/// such object per attachment). They read the batch's snapshot through the call's loader, as
/// <c>load</c> does, so a map sees the attachments of the very version of the document it maps.
/// </summary>
/// <remarks>
/// Nothing is tracked: a change of a document's attachments stores the document again, so the
/// document is mapped again anyway (and a loaded document's change reaches its referrers through
/// <c>load</c>'s tracking). Content is read only when <c>getContentAsString</c> is called, up to
/// <see cref="JavaScriptLimits.MaxAttachmentBytes"/>, and only during the call that made the object:
/// one kept in a global fails with a TypeError afterwards, as a kept document does.
/// </remarks>
internal sealed class MapAttachments(MapScope scope, JavaScriptLimits limits)
{
    private Engine Engine => scope.Engine;

    /// <summary>Registers the three functions as globals of the map's engine.</summary>
    public void Register(Engine engine)
    {
        engine.SetValue("attachmentsFor", new ClrFunction(engine, "attachmentsFor", AttachmentsFor, 1));
        engine.SetValue("loadAttachment", new ClrFunction(engine, "loadAttachment", LoadAttachment, 2));
        engine.SetValue("loadAttachments", new ClrFunction(engine, "loadAttachments", LoadAttachments, 1));
    }

    private JsValue AttachmentsFor(JsValue thisObject, JsValue[] arguments)
    {
        var list = Attachments("attachmentsFor(doc)", arguments);
        var result = new JsValue[list.Count];
        for (var i = 0; i < list.Count; i++)
        {
            result[i] = Details(list[i]);
        }

        return new JsArray(Engine, result);
    }

    private JsValue LoadAttachment(JsValue thisObject, JsValue[] arguments)
    {
        var id = DocumentIdOf("loadAttachment(doc, name)", arguments);
        var nameValue = arguments.Length > 1 ? arguments[1] : JsValue.Undefined;
        if (!nameValue.IsString())
        {
            throw new JavaScriptException(Engine.Intrinsics.TypeError, $"loadAttachment(doc, name) takes the attachment's name as a string, not {MapScope.Describe(nameValue)}.");
        }

        if (id is null)
        {
            return JsValue.Null;
        }

        var name = nameValue.AsString();
        foreach (var attachment in scope.Loader?.GetAttachments(id) ?? [])
        {
            if (string.Equals(attachment.Name, name, StringComparison.OrdinalIgnoreCase))
            {
                return WithContent(id, attachment);
            }
        }

        return JsValue.Null;
    }

    private JsValue LoadAttachments(JsValue thisObject, JsValue[] arguments)
    {
        var id = DocumentIdOf("loadAttachments(doc)", arguments);
        var list = id is null ? [] : scope.Loader?.GetAttachments(id) ?? [];
        var result = new JsValue[list.Count];
        for (var i = 0; i < list.Count; i++)
        {
            result[i] = WithContent(id!, list[i]);
        }

        return new JsArray(Engine, result);
    }

    private IReadOnlyList<AttachmentInfo> Attachments(string function, JsValue[] arguments) =>
        DocumentIdOf(function, arguments) is { } id ? scope.Loader?.GetAttachments(id) ?? [] : [];

    /// <summary>The id of the document argument; null for null/undefined (no attachments), a TypeError for anything but a document.</summary>
    private string? DocumentIdOf(string function, JsValue[] arguments)
    {
        var doc = arguments.Length > 0 ? arguments[0] : JsValue.Undefined;
        if (!scope.InCall)
        {
            throw new JavaScriptException(Engine.Intrinsics.TypeError, $"{function} can only be called while a document is mapped, not when the index is compiled.");
        }

        if (doc.IsNull() || doc.IsUndefined())
        {
            return null;
        }

        if (doc is not ObjectInstance || scope.Id(JsValue.Undefined, [doc]) is not JsString id)
        {
            throw new JavaScriptException(Engine.Intrinsics.TypeError, $"{function} takes a document (the map's argument or a loaded one), not {MapScope.Describe(doc)}.");
        }

        return id.ToString();
    }

    private JsObject Details(AttachmentInfo attachment)
    {
        var result = new JsObject(Engine);
        result.FastSetDataProperty("Name", new JsString(attachment.Name));
        result.FastSetDataProperty("Hash", new JsString(attachment.Hash));
        result.FastSetDataProperty("ContentType", new JsString(attachment.ContentType));
        result.FastSetDataProperty("Size", JsNumber.Create(attachment.Size));
        return result;
    }

    private JsObject WithContent(string documentId, AttachmentInfo attachment)
    {
        var result = Details(attachment);
        var generation = scope.Generation;
        result.FastSetDataProperty("getContentAsString", new ClrFunction(Engine, "getContentAsString",
            (_, arguments) => ContentAsString(documentId, attachment, generation, arguments.Length > 0 ? arguments[0] : JsValue.Undefined), 1));
        return result;
    }

    private JsString ContentAsString(string documentId, AttachmentInfo attachment, long generation, JsValue encodingValue)
    {
        if (generation != scope.Generation)
        {
            throw new JavaScriptException(Engine.Intrinsics.TypeError,
                $"Attachment '{attachment.Name}' of '{documentId}' belongs to an earlier map call and can no longer be read (a map must not keep attachments in globals).");
        }

        var encoding = EncodingOf(encodingValue);
        if (attachment.Size > limits.MaxAttachmentBytes)
        {
            throw new JavaScriptException(Engine.Intrinsics.Error,
                $"attachment '{attachment.Name}' of '{documentId}' is {attachment.Size:N0} bytes; a map reads at most {limits.MaxAttachmentBytes:N0} bytes of an attachment as text (JavaScriptLimits.MaxAttachmentBytes). Index its details (attachmentsFor) instead, or a smaller attachment.");
        }

        using var stream = scope.Loader?.OpenAttachment(documentId, attachment.Name);
        if (stream is null)
        {
            return new JsString(string.Empty);
        }

        var bytes = new byte[attachment.Size];
        stream.ReadExactly(bytes);
        return new JsString(encoding.GetString(bytes));
    }

    /// <summary>RavenDB's encoding names (<c>utf8</c> by default), ignoring case and dashes.</summary>
    private Encoding EncodingOf(JsValue value)
    {
        if (value.IsUndefined() || value.IsNull())
        {
            return Encoding.UTF8;
        }

        var name = value.IsString() ? value.AsString().Replace("-", string.Empty, StringComparison.Ordinal).ToLowerInvariant() : null;
        return name switch
        {
            "utf8" => Encoding.UTF8,
            "utf16" or "utf16le" or "unicode" or "ucs2" => Encoding.Unicode,
            "utf16be" or "bigendianunicode" => Encoding.BigEndianUnicode,
            "utf32" => Encoding.UTF32,
            "ascii" => Encoding.ASCII,
            "latin1" or "iso88591" => Encoding.Latin1,
            _ => throw new JavaScriptException(Engine.Intrinsics.TypeError,
                $"getContentAsString(encoding) does not know {(value.IsString() ? $"the encoding '{value.AsString()}'" : MapScope.Describe(value))}; use 'utf8' (the default), 'utf16', 'utf16be', 'utf32', 'ascii' or 'latin1'."),
        };
    }
}
