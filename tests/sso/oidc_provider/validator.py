"""django-oauth-toolkit's validator, with the claims Concord reads and one faulty id_token per test client.

Each client of the test provider is registered for one behaviour (its name): ``good`` issues what DOT issues;
the others issue an id_token that Concord must refuse, produced here, at the provider, exactly as DOT produces a
good one except for the one fault: ``expired`` (exp in the past), ``wrongaud`` (aud another client),
``wrongiss`` (iss another issuer), ``badsig`` (signed with a key that is not the provider's, under the provider's
kid), ``badnonce`` (a nonce that is not the one Concord sent).
"""

import json
import time

from jwcrypto import jwk, jwt
from oauth2_provider.models import AbstractApplication
from oauth2_provider.oauth2_validators import OAuth2Validator

_OTHER_KEY = jwk.JWK.generate(kty="RSA", size=2048)


class Validator(OAuth2Validator):
    def get_additional_claims(self, request):
        user = request.user
        return {
            "preferred_username": user.username,
            "email": user.email,
            "given_name": user.first_name,
            "family_name": user.last_name,
        }

    def finalize_id_token(self, id_token, token, token_handler, request):
        mode = request.client.name
        claims, expiration_time = self.get_id_token_dictionary(token, token_handler, request)
        id_token.update(**claims)
        if "nonce" not in id_token and request.nonce:
            id_token["nonce"] = request.nonce
        now = int(time.time())
        if mode == "expired":
            id_token["iat"], id_token["exp"] = now - 3600, now - 1800
        elif mode == "wrongaud":
            id_token["aud"] = "some-other-client"
        elif mode == "wrongiss":
            id_token["iss"] = "http://127.0.0.1:1/not-the-issuer"
        elif mode == "badnonce":
            id_token["nonce"] = "not-the-nonce-concord-sent"
        header = {"typ": "JWT", "alg": request.client.algorithm}
        if request.client.algorithm == AbstractApplication.RS256_ALGORITHM:
            header["kid"] = request.client.jwk_key.thumbprint()
        signed = jwt.JWT(header=json.dumps(header, default=str), claims=json.dumps(id_token, default=str))
        signed.make_signed_token(_OTHER_KEY if mode == "badsig" else request.client.jwk_key)
        saved = self._save_id_token(id_token["jti"], request, expiration_time)
        request.access_token = saved
        request.id_token = saved
        return signed.serialize()
