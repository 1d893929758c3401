using System.Security.Cryptography;
using System.Text;

namespace Jackdaw.Server.Security;

/// <summary>
/// An RSA private key as PKCS#1 PEM (<c>-----BEGIN RSA PRIVATE KEY-----</c>), optionally encrypted
/// the traditional OpenSSL way, as RavenDB writes the key of a certificate it generates:
/// <code>
/// -----BEGIN RSA PRIVATE KEY-----
/// Proc-Type: 4,ENCRYPTED
/// DEK-Info: DES-EDE3-CBC,{IV: 8 bytes, hex}
///
/// {base64 of 3DES-CBC(PKCS#1 DER), PKCS#7 padding; 64 characters a line}
/// -----END RSA PRIVATE KEY-----
/// </code>
/// The key is OpenSSL's <c>EVP_BytesToKey</c>: MD5, one round, salt = the IV. RavenDB's Node.js
/// client reads PEM keys only under that label (it finds neither PKCS#8 label), and hands the
/// password to OpenSSL as the passphrase. .NET writes no such PEM, hence this.
/// </summary>
public static class TraditionalPem
{
    public const string Label = "RSA PRIVATE KEY";

    public static string Write(RSA key, string? password)
    {
        if (password is null)
        {
            return key.ExportRSAPrivateKeyPem() + "\n";
        }
        var der = key.ExportRSAPrivateKey();
        var iv = RandomNumberGenerator.GetBytes(8);
        var secret = DeriveKey(Encoding.UTF8.GetBytes(password), iv, 24);
        byte[] encrypted;
        try
        {
            using var cipher = TripleDES.Create();
            cipher.Key = secret;
            encrypted = cipher.EncryptCbc(der, iv, PaddingMode.PKCS7);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(der);
            CryptographicOperations.ZeroMemory(secret);
        }
        var pem = new StringBuilder();
        pem.Append("-----BEGIN ").Append(Label).Append("-----\n");
        pem.Append("Proc-Type: 4,ENCRYPTED\n");
        pem.Append("DEK-Info: DES-EDE3-CBC,").Append(Convert.ToHexString(iv)).Append("\n\n");
        var base64 = Convert.ToBase64String(encrypted);
        for (var i = 0; i < base64.Length; i += 64)
        {
            pem.Append(base64.AsSpan(i, Math.Min(64, base64.Length - i))).Append('\n');
        }
        pem.Append("-----END ").Append(Label).Append("-----\n");
        return pem.ToString();
    }

    /// <summary>
    /// OpenSSL's <c>EVP_BytesToKey</c> with MD5 and one round: D1 = MD5(password ‖ salt),
    /// Dn = MD5(Dn-1 ‖ password ‖ salt), the key is D1 ‖ D2 ‖ ... cut to <paramref name="length"/>.
    /// </summary>
    internal static byte[] DeriveKey(ReadOnlySpan<byte> password, ReadOnlySpan<byte> salt, int length)
    {
        var key = new byte[length];
        Span<byte> previous = stackalloc byte[MD5.HashSizeInBytes];
        var input = new byte[MD5.HashSizeInBytes + password.Length + salt.Length];
        var filled = 0;
        var first = true;
        while (filled < length)
        {
            var offset = 0;
            if (!first)
            {
                previous.CopyTo(input);
                offset = previous.Length;
            }
            password.CopyTo(input.AsSpan(offset));
            salt.CopyTo(input.AsSpan(offset + password.Length));
            MD5.HashData(input.AsSpan(0, offset + password.Length + salt.Length), previous);
            var take = Math.Min(previous.Length, length - filled);
            previous[..take].CopyTo(key.AsSpan(filled));
            filled += take;
            first = false;
        }
        CryptographicOperations.ZeroMemory(input);
        return key;
    }
}
